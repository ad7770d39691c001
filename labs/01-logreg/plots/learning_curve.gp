# learning_curve.gp — lab 01: training and validation loss, validation accuracy.
# Variables: data (metrics.csv); features, lr, lambda, batch (the run, for the
# title); last (the last epoch); vmin, vmin_epoch (the validation loss's
# minimum and its epoch; NaN and -1 when none is finite); nan_from (the first
# epoch whose training loss is NaN or inf, -1: none); zigzag (1: the loss goes
# up and down at most epochs, drawn as dots so both levels show); acc_min (the
# lowest validation accuracy: the right axis starts below it).
if (!exists("features")) features = ''
if (!exists("lr")) lr = 0
if (!exists("lambda")) lambda = 0
if (!exists("batch")) batch = ''
if (!exists("last")) last = 0
if (!exists("vmin")) vmin = NaN
if (!exists("vmin_epoch")) vmin_epoch = -1
if (!exists("nan_from")) nan_from = -1
if (!exists("zigzag")) zigzag = 0
if (!exists("acc_min")) acc_min = 0.5
set title sprintf("Lab 01 learning curve: %s, lr %g, λ %g\n%s", features, lr, lambda, batch)
# A long run on a log epoch axis: the first epochs, where the validation loss
# has its minimum, get as much room as the hundreds after them (epoch 0, the
# start at w = 0, has no place on it). The axis ends at the next 1-2-5 step.
logx = (last >= 20)
if (logx) {
    set logscale x
    top = 1; do for [i = 0:14] { top = (top < last) ? top * (i % 3 == 1 ? 2.5 : 2) : top }
    set xrange [1:top]
    set xtics () ; do for [i = 0:15] { t = 10**(i / 3) * (i % 3 == 0 ? 1 : i % 3 == 1 ? 2 : 5); if (t <= top) { set xtics add (sprintf('%g', t) t) } }
    set mxtics 10
    set xlabel 'epoch (log scale, from epoch 1)'
} else {
    set xlabel 'epoch'
    if (last <= 12) { set xtics 1; set mxtics 1 }
    set xrange [0:(last > 0 ? last : 1)]
}
set ylabel 'loss (cross-entropy, log scale)'
set logscale y
set format y pow10
# a loss that is NaN from the start leaves nothing to scale the axis on
if (nan_from == 0) { set yrange [0.01:1] }
acc_lo = acc_min >= 0.5 ? 0.5 : floor(acc_min * 10) / 10.0
set y2label 'validation accuracy (share of rows right)'
set y2range [acc_lo:1.0]
set y2tics 0.1 nomirror
if (nan_from >= 0) {
    set label 1 sprintf("the loss is NaN from epoch %d on: not drawn from there", nan_from) \
        at graph 0.5, graph 0.5 center front tc rgb '#C62828'
}
# the validation minimum: where the model fits the rows it has not seen best
show_min = (vmin == vmin) && vmin_epoch >= (logx ? 1 : 0)
# (its words go left of the point when it sits in the right part of the axis)
at_right = logx ? (vmin_epoch >= 1 && log(vmin_epoch) > 0.55 * log(top)) : (vmin_epoch > 0.55 * (last > 0 ? last : 1))
if (show_min) {
    set label 2 sprintf("validation minimum %.4g, epoch %d", vmin, vmin_epoch) at vmin_epoch, vmin \
        offset (at_right ? -1 : 1), -1.3 front tc rgb '#D55E00'
    if (at_right) { set label 2 right } else { set label 2 left }
}
# below the plot: inside, the box would hide a curve wherever it sat
eval key_below(2)
set key maxrows 2
style1 = zigzag ? 'points' : 'lines'
dots = zigzag ? 'pt 7 ps 0.45' : ''
# keyentry: a curve with no finite point (a NaN loss) still gets its line in the key
plot data using "epoch":"train_loss" with @style1 ls 1 @dots notitle, \
     data using "epoch":"val_loss" with @style1 ls 2 @dots notitle, \
     data using "epoch":"val_acc" axes x1y2 with @style1 ls 3 @dots notitle, \
     '+' using (vmin_epoch):(show_min ? vmin : NaN) every ::0::0 with points ls 2 pt 7 ps 1.6 notitle, \
     keyentry with @style1 ls 1 @dots \
          title (nan_from >= 0 ? sprintf("train loss (objective): NaN from epoch %d", nan_from) : 'train loss (objective)'), \
     keyentry with @style1 ls 2 @dots title 'validation loss', \
     keyentry with @style1 ls 3 @dots title 'validation accuracy', \
     keyentry with points ls 2 pt 7 ps 1.6 title (show_min ? 'validation minimum' : '')
