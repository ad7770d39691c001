# training.gp — lab 03: the training loss and the validation accuracy per
# epoch (left), and the largest parameter difference across ranks (right: 0
# when the ranks stay in sync). Variables: data (metrics.csv), mode, P.
# One epoch is drawn as points in a range around it (no empty range).
stats data using (column("epoch")) nooutput
n = STATS_records
set multiplot layout 1,2 title sprintf("Lab 03: %s training on %d rank(s)", mode, P)
set xlabel 'epoch'
if (n == 1) { set xrange [0.5:1.5]; set xtics 1 } else { set xrange [1:n] }
if (n <= 12) { set mxtics 1 }
set ylabel 'training loss (cross-entropy)'
set yrange [0:*]
set y2label 'validation accuracy (share of rows right)'
set y2range [0:1]
set y2tics 0.2 nomirror
# the keys go below the panels: inside, they would cover a curve
set bmargin 6.5
set key at graph 0.5, screen 0.012 center bottom vertical box opaque
plot data using "epoch":"loss" with linespoints ls 1 title 'training loss', \
     data using "epoch":"val_acc" axes x1y2 with linespoints ls 3 title 'validation accuracy'
unset y2label
unset y2tics
set title sub("0: the ranks hold one model; above 0: P different models")
set ylabel 'largest |parameter difference| across ranks'
stats data using (column("param_diff")) nooutput
if (STATS_max > 0) { set yrange [0:*] } else { set yrange [0:1e-6] }
plot data using "epoch":"param_diff" with linespoints ls 2 title 'largest |Δ parameter| over the ranks'
unset multiplot
