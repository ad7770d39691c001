# speedup_batch.gp — lab 03: projected speedup of correct DDP on the target's
# GPUs against the per-rank batch: compute per step grows with the batch,
# the allreduce does not. Variables: data (projection.csv), B (this run's
# per-rank batch), profile, gpus (the target's GPU count: the ideal line).
if (!exists("gpus")) gpus = 4
stats data using (column("batch_per_rank")) nooutput
if (STATS_records == 1) { set xrange [B/2.0:B*2.0] }
set title sprintf("Projected speedup on %s by per-rank batch\n%s", profile, sub("compute per step grows with the batch, the allreduce does not"))
set logscale x 2
set xlabel 'rows per rank per step'
set ylabel 'speedup over one GPU (projected)'
set yrange [0:gpus + 0.2]
# below the plot: inside, the key covered the ideal line
eval key_below(1)
set arrow from B, graph 0 to B, graph 1 nohead dt 3 lc rgb '#888888'
# the label sits low, between the axis and the one-GPU line, clear of the ideal line at the top
set label 'this run' at B, graph 0.08 left offset 0.5,0 tc rgb '#666666'
plot data using "batch_per_rank":"speedup" with linespoints ls 1 title 'projected speedup', \
     gpus with lines ls 7 title sprintf('ideal (%d GPUs)', gpus), \
     1 with lines ls 2 dt 3 title 'one GPU'
