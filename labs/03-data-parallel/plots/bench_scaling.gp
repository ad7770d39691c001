# bench_scaling.gp — lab 03 bench: epoch time on 1 and 2 ranks, split into
# compute and the rest (communication and waiting). Variables: data.
set title "Lab 03: strong scaling here (one BLAS thread per rank)"
set style data histograms
set style histogram rowstacked
set style fill solid 0.85 border -1
set boxwidth 0.5
set xlabel 'ranks'
set ylabel 'epoch time (s)'
set yrange [0:*]
set key top right
plot data using "compute_s":xtic(1) title 'compute' ls 1, '' using "comm_s" title 'communication + waiting' ls 2
