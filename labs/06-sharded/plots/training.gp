# training.gp — lab 06: training loss and validation accuracy per epoch.
# Variables: data (metrics.csv), mode, P.
stats data using "epoch" name "E" nooutput
set title sprintf("Lab 06: %s training on %d rank(s)", mode, P)
set xlabel 'epoch'
# whole epochs only: a short run would get tics at 1.5, 2.5, ...
if (E_max <= 12) { set xtics 1; set mxtics 1 }
if (E_max <= 1) { set xrange [0.5:1.5] } # one epoch: a point, not an empty range
set ylabel 'training loss (cross-entropy)'
set yrange [0:*]
set y2label 'validation accuracy (share of rows right)'
set y2range [0:1]
set y2tics 0.2 nomirror
# below the plot: inside, the box would cover one of the two curves
eval key_below(1)
plot data using "epoch":"loss" with linespoints ls 1 title 'training loss', \
     data using "epoch":"val_accuracy" axes x1y2 with linespoints ls 3 title 'validation accuracy'
