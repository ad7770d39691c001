# training.gp — lab 05: training loss and validation accuracy per epoch.
# Variables: data (metrics.csv), mode, P.
stats data using "epoch" name "E" nooutput
set title sprintf("Lab 05: %s training on %d rank(s)", mode, P)
set xlabel 'epoch'
# whole epochs only: a short run would get tics at 1.5, 2.5, ...
if (E_max <= 12) { set xtics 1; set mxtics 1 }
set ylabel 'training loss (cross-entropy)'
set yrange [0:*]
set y2label 'validation accuracy (share of rows right)'
set y2range [0:1]
set y2tics 0.2 nomirror
# a loss that jumps by more than a third from one epoch to the next: the
# learning rate (metrics.csv's lr, the epoch's last step's) was too high for
# a moment; say so at the first such epoch (lab 05's default run: at the end
# of the warm-up, lr 0.08 with momentum 0.9, the loss goes back to about
# ln 10, the loss of a guess, and recovers as the cosine lowers the rate)
prev = NaN
spike_e = spike_lr = spike_loss = NaN
seen(e, l, r) = (l > 1.33 * prev && spike_e != spike_e ? (spike_e = e, spike_loss = l, spike_lr = r) : 0, prev = l, 0)
stats data using (seen(column("epoch"), column("loss"), column("lr"))) name "SPIKE" nooutput
stats data using "lr" name "LR" nooutput
if (spike_e == spike_e) {
    set arrow 1 from spike_e + 0.06 * E_max, spike_loss * 1.02 to spike_e + 0.15, spike_loss lw 1.5 lc rgb '#444444'
    set label 1 sprintf("epoch %d: the learning rate, %.3g (peak %.3g), is too high\nfor a moment: the loss jumps, then falls as it is lowered", \
        spike_e, spike_lr, LR_max) at spike_e + 0.065 * E_max, spike_loss * 1.02 left tc rgb '#444444'
}
# below the plot: inside, the box would cover one of the two curves
eval key_below(1)
plot data using "epoch":"loss" with linespoints ls 1 title 'training loss', \
     data using "epoch":"val_accuracy" axes x1y2 with linespoints ls 3 title 'validation accuracy'
