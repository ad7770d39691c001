# speedup_batch.gp — lab 03: projected 4-GPU speedup against the per-rank
# batch: compute per step grows with the batch, the allreduce does not.
# Variables: data (projection.csv), B (this run's per-rank batch), profile.
set title sprintf("Projected speedup on %s by per-rank batch\n%s", profile, sub("compute per step grows with the batch; the gradient allreduce stays the same size"))
set logscale x 2
set xlabel 'rows per rank per step'
set ylabel 'speedup over one GPU (projected)'
set yrange [0:4.2]
set key top left
set arrow from B, graph 0 to B, graph 1 nohead dt 3 lc rgb '#888888'
set label 'this run' at B, graph 0.95 left offset 0.5,0 tc rgb '#666666'
plot data using "batch_per_rank":"speedup" with linespoints ls 1 title 'projected speedup', \
     4 with lines ls 7 title 'ideal (4 GPUs)', \
     1 with lines ls 2 dt 3 title 'one GPU'
