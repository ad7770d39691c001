# sweep.gp — lab 05: projected step time against the bucket cap: latency-bound
# on the left (many small allreduces), no overlap on the right (one bucket
# launched at the end of backward), the optimum marked.
# Variables: data (sweep.csv: cap_kib, step_ms, buckets), profile.
stats data using "step_ms" name "S" nooutput
stats data using (column("step_ms") == S_min ? column("cap_kib") : 1/0) name "BEST" nooutput
set title sprintf("Lab 05: projected step time vs bucket cap on %s", profile)
set logscale x 2
set xlabel 'bucket cap (KiB)'
set ylabel 'projected step time (ms)'
set key top left
set label 1 sprintf("best: %g KiB, %.3f ms", BEST_min, S_min) at BEST_min, S_min offset 1,-1
plot data using "cap_kib":"step_ms" with linespoints ls 1 title 'bucketed (your assignment)', \
     data using "cap_kib":"step_ms":(sprintf("%d", column("buckets"))) with labels offset 0,1 font ",8" notitle, \
     '+' using (BEST_min):(S_min) every ::0::0 with points pt 7 ps 1.5 lc rgb "red" title 'optimum'
