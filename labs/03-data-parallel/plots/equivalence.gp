# equivalence.gp — lab 03: the loss of P ranks at batch B against one rank at
# batch P·B, step by step: the curves must lie on top of each other.
# Variables: data (steps.csv), P, B. One step is drawn in a range around it.
stats data using (column("step")) nooutput
if (STATS_records == 1) { set xrange [-0.5:0.5]; set xtics 1 }
set title sprintf("%d ranks x batch %d vs 1 rank x batch %d\n%s", P, B, P*B, sub("averaged gradients make them the same optimisation"))
set xlabel 'optimizer step'
set ylabel 'training loss of the step''s batch'
set yrange [0:*]
set key top right
plot data using "step":"ddp" with linespoints ls 1 pt 7 title sprintf('%d ranks (DDP)', P), \
     data using "step":"one_rank" with linespoints ls 2 dt 2 lw 3 pt 6 title '1 rank, global batch'
