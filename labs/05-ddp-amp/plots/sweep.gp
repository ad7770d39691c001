# sweep.gp — lab 05: projected step time against the bucket cap: latency-bound
# on the left (many small allreduces), no overlap on the right (one bucket
# launched at the end of backward). The caps within 1% of the best step are
# shaded as one range (the curve is flat there: no one cap is "the" optimum);
# the number over each point is how many buckets that cap makes.
# Variables: data (sweep.csv: cap_kib, step_ms, buckets), profile, cap_kib
# (this run's bucket cap in KiB; 0: not marked), first_kib (the first
# bucket's cap in KiB, when it is below the cap swept).
if (!exists("cap_kib")) cap_kib = 0
if (!exists("first_kib")) first_kib = 0
within = 0.01
stats data using "step_ms" name "S" nooutput
stats data using (column("step_ms") <= S_min * (1 + within) ? column("cap_kib") * 1024 : NaN) name "FLAT" nooutput
stats data using (column("cap_kib") * 1024) name "CAP" nooutput
kib(b) = b >= 2**20 ? sprintf("%g MiB", b / 2.0**20) : sprintf("%g KiB", b / 1024.0)
set title sprintf("Lab 05: projected step time against the bucket cap on %s\n%s", profile, \
    sub("left: many small buckets pay the ring's latency each; right: one big bucket starts only after backward"))
eval bytes_axis('x')
set xlabel 'bucket cap (bytes, log scale)'
if (first_kib > 0) set xlabel sprintf("bucket cap (bytes, log scale; the first bucket: at most %s)", kib(first_kib * 1024))
set ylabel 'projected step time (ms)'
set yrange [0:S_max * 1.15]
set xrange [CAP_min / 1.4:CAP_max * 1.4]
set object 1 rect from FLAT_min / 1.15, graph 0 to FLAT_max * 1.15, graph 1 behind fc rgb '#0072B2' \
    fs solid 0.12 noborder
if (cap_kib > 0) {
    set arrow 1 from cap_kib * 1024, graph 0 to cap_kib * 1024, graph 1 nohead dt 3 lc rgb '#666666'
    set label 1 sprintf("this run's cap: %s", kib(cap_kib * 1024)) at cap_kib * 1024, graph 0.08 left offset 0.5,0 \
        tc rgb '#666666'
}
eval key_below(2)
plot NaN with boxes fs solid 0.12 noborder lc rgb '#0072B2' \
          title sprintf('within 1%% of the best step (%.3f ms): caps from %s to %s', S_min, kib(FLAT_min), \
                        kib(FLAT_max)), \
     data using (column("cap_kib") * 1024):"step_ms" with linespoints ls 1 \
          title 'projected step (your bucket assignment); the number over a point: its buckets', \
     data using (column("cap_kib") * 1024):"step_ms":(sprintf("%d", column("buckets"))) \
          with labels offset 0,1 notitle
