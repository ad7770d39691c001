# bench_epoch.gp — lab 02: an epoch's GEMM rate by batch size, against sgemm.
# Variables: data (CSV: batch,epoch_seconds,GFLOPs,fraction_of_sgemm), peak.
set title "Lab 02: softmax-regression epoch on Fashion-MNIST, one thread"
set xlabel 'batch size'
set ylabel 'GFLOP/s in the epoch''s GEMMs'
set logscale x 2
set yrange [0:*]
set key bottom right
plot data using "batch":"GFLOPs" with linespoints ls 1 title 'whole epoch', \
     data using "batch":"gemm_only_GFLOPs" with linespoints ls 3 title 'its two GEMMs alone', \
     peak with lines ls 7 title 'sgemm 1024^3 (same thread)', \
     0.5 * peak with lines ls 2 dt 3 title '50% (target)'
