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
stats data using "loss" name "L" nooutput
if (spike_e == spike_e && L_max == L_max && L_max > 0 && L_max < 1e30) {
    # The note goes in a band at the top of the plot that no curve can reach:
    # the loss stays under `top` (its largest, rounded up to a round number)
    # and the accuracy under 1, and both axes run on to band times that, so
    # the top 1 - 1/band of the plot is empty. Beside the curves, wherever it
    # sat, a curve of some run crossed it (fp16 AMP: the accuracy's).
    band = 1.3
    m = 10.0 ** floor(log10(L_max))
    r = L_max / m
    top = m * (r <= 1 ? 1 : r <= 1.5 ? 1.5 : r <= 2 ? 2 : r <= 2.5 ? 2.5 : r <= 3 ? 3 : \
               r <= 4 ? 4 : r <= 5 ? 5 : r <= 6 ? 6 : r <= 8 ? 8 : 10)
    # five steps to the top on each axis: the loss's tics meet the accuracy's
    set yrange [0:top * band]
    set ytics 0, top / 5, top * 1.001
    set y2range [0:band]
    set y2tics 0, 0.2, 1.001
    # the note centred near its epoch (as far as its width allows), and an
    # arrow straight down from under it to the epoch's loss
    fx = E_max > E_min ? (spike_e - E_min) / (E_max - E_min) : 0.5
    fx = fx < 0.36 ? 0.36 : fx > 0.64 ? 0.64 : fx
    set label 1 sprintf("epoch %d: the learning rate, %.3g (peak %.3g), is too high\nfor a moment: the loss jumps, then falls as it is lowered", \
        spike_e, spike_lr, LR_max) at graph fx, graph 0.96 center tc rgb '#444444'
    set arrow 1 from first spike_e, graph 0.855 to first spike_e, graph (spike_loss / (top * band) + 0.025) \
        lw 1.5 lc rgb '#444444'
}
# below the plot: inside, the box would cover one of the two curves
eval key_below(1)
plot data using "epoch":"loss" with linespoints ls 1 title 'training loss', \
     data using "epoch":"val_accuracy" axes x1y2 with linespoints ls 3 title 'validation accuracy'
