# training.gp — lab 03: the training loss and the validation accuracy per
# epoch (left), and the largest parameter difference across ranks (right: 0
# when the ranks stay in sync). Variables: data (metrics.csv), mode, P.
# One epoch is drawn as points in a range around it (no empty range).
stats data using (column("epoch")) nooutput
n = STATS_records
set multiplot layout 1,2 title sprintf("Lab 03: %s training on %d rank(s)", mode, P)
set xlabel 'epoch'
if (n == 1) { set xrange [0.5:1.5]; set xtics 1 } else { set xrange [1:n] }
if (n <= 12) { set xtics 1; set mxtics 1 }
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
# right: are the P replicas one model? 0 is "bitwise equal", which a log
# axis cannot draw: the panel says it in words; a difference is drawn on a log
# axis against 1e-6, about where float rounding alone would leave replicas
# that summed their gradients in different orders
set title 'the replicas: largest |parameter difference|'
set ylabel 'largest |Δ parameter| across ranks (log scale)'
stats data using (column("param_diff")) name "D" nooutput
set logscale y
set mytics 1
set format y pow10
set arrow 2 from graph 0, first 1e-6 to graph 1, first 1e-6 nohead dt 2 lc rgb '#444444' front
if (D_max > 0) {
    set yrange [1e-8:*]
    plot data using "epoch":(column("param_diff") > 0 ? column("param_diff") : 1e-8) with linespoints ls 2 \
             title 'largest |Δ parameter| (a 0 drawn at 1e-8)', \
         keyentry with lines dt 2 lc rgb '#444444' title '1e-6: rounding level'
} else {
    set yrange [1e-8:1]
    set label 5 sprintf("bitwise equal:\nthe difference is 0\nat all %d epochs", n) at graph 0.5, graph 0.7 center front \
        tc rgb '#1A7F37' font ',20'
    plot NaN notitle, keyentry with lines dt 2 lc rgb '#444444' title '1e-6: rounding level'
}
unset multiplot
