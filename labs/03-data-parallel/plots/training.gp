# training.gp — lab 03: the training loss and the validation accuracy per
# epoch (left), and the largest parameter difference across ranks (right: 0
# when the ranks stay in sync). Variables: data (metrics.csv), mode, P.
# One epoch is drawn as points in a range around it (no empty range).
stats data using (column("epoch")) nooutput
n = STATS_records
set multiplot layout 1,2 title sprintf("Lab 03: %s training on %d rank(s)", mode, P)
set xlabel 'epoch'
if (n == 1) { set xrange [0.5:1.5]; set xtics 1 } else { set xrange [1:n] }
set ylabel 'training loss'
set yrange [0:*]
set y2label 'validation accuracy'
set y2range [0:1]
set y2tics 0.2 nomirror
set key center right
plot data using "epoch":"loss" with linespoints ls 1 title 'loss', \
     data using "epoch":"val_acc" axes x1y2 with linespoints ls 3 title 'validation accuracy'
unset y2label
unset y2tics
set title sub("0: the ranks hold one model; above 0: P different models")
set ylabel 'largest |parameter difference| across ranks'
stats data using (column("param_diff")) nooutput
if (STATS_max > 0) { set yrange [0:*] } else { set yrange [0:1e-6] }
set key top left
plot data using "epoch":"param_diff" with linespoints ls 2 title '|Delta param|'
unset multiplot
