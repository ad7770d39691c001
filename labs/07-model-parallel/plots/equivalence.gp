# equivalence.gp — lab 07: the split model's loss against the one-rank model's, step by step.
# Variables: data (steps.csv), P (ranks), diff (the largest parameter difference over the run).
set multiplot layout 2,1 title sprintf("Tensor parallelism on %d rank(s) trains the one-rank model\n%s", P, \
    sprintf("largest parameter difference over the run: %.2g", diff))
set xlabel 'step'
set ylabel 'loss'
set key top right
plot data using 'step':'ref_loss' title 'one rank' with lines ls 2 lw 4, \
     data using 'step':'loss' title sprintf('split over %d rank(s)', P) with lines ls 1 lw 1.5
set logscale y 10
set yrange [1e-13:1e-2] # 0 (one rank: the same arithmetic) drawn at 1e-12
set format y pow10
set ylabel '|loss difference| (log scale)'
unset key
plot data using 'step':(column('loss_diff') > 0 ? column('loss_diff') : 1e-12) title 'difference (0 drawn at 1e-12)' with points ls 1 pt 7 ps 0.4
unset multiplot
