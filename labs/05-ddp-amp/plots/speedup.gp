# speedup.gp — lab 05: projected speedup over one GPU against the number of
# GPUs, for the three ways to synchronise gradients, and the ideal. The key
# gives each mode's speedup and exposed communication at the most GPUs
# projected (the numbers of summary.json's projection).
# Variables: data (projection.csv), profile.
stats data using "ranks" name "R" nooutput
# the row of the most GPUs, read into variables as stats passes it
bs = be = fs = fe = ps = pe = NaN
last_row(dummy) = (bs = column("bucketed"), be = column("bucketed_exposed"), fs = column("ddp_flat"), \
                   fe = column("flat_exposed"), ps = column("per_param"), pe = column("per_param_exposed"), 0)
stats data using (column("ranks") == R_max ? last_row(0) : 0) name "ROW" nooutput
entry(name, s, e) = sprintf("%s: %.2f× at %d GPUs, %.1f%% of the step exposed", name, s, R_max, 100 * e)
set title sprintf("Lab 05: projected speedup on %s (per-rank batch fixed)\n%s", profile, \
    sub("exposed: the share of the step spent waiting for communication that backward did not hide"))
set xlabel 'GPUs'
set ylabel 'speedup over one GPU (projected)'
set xtics (1, 2, 4)
set mxtics 1
set xrange [0.8:4.2]
set yrange [0:4.5]
set key top left
plot x with lines dt 2 lc rgb "gray" title 'ideal', \
     data using "ranks":"bucketed" with linespoints ls 1 title entry('bucketed (overlapped)', bs, be), \
     data using "ranks":"ddp_flat" with linespoints ls 2 title entry('ddp-flat (after backward)', fs, fe), \
     data using "ranks":"per_param" with linespoints ls 3 title entry('per-param', ps, pe)
