# speedup.gp — lab 05: projected speedup over one GPU against the number of
# GPUs, for the three ways to synchronise gradients, and the ideal.
# Variables: data (projection.csv), profile.
set title sprintf("Lab 05: projected speedup on %s (per-rank batch fixed)", profile)
set xlabel 'GPUs'
set ylabel 'speedup over one GPU'
set xtics (1, 2, 4)
set xrange [0.8:4.2]
set yrange [0:4.5]
set key top left
plot x with lines dt 2 lc rgb "gray" title 'ideal', \
     data using "ranks":"bucketed" with linespoints ls 1 title 'bucketed (overlapped)', \
     data using "ranks":"ddp_flat" with linespoints ls 2 title 'ddp-flat (after backward)', \
     data using "ranks":"per_param" with linespoints ls 3 title 'per-param'
