# scaling.gp — lab 01: the same learning rate on standardised and raw features.
# Variables: data (scaling.csv), lr, max_epochs (--epochs); each run's last
# epoch and training loss, as summary.json has them: s_n, s_loss
# (standardised), r_n, r_loss (raw). The key gives them, and a point marks
# where each run stopped.
if (!exists("lr")) lr = 0
if (!exists("max_epochs")) max_epochs = 0
if (!exists("s_n")) s_n = -1
if (!exists("r_n")) r_n = -1
if (!exists("s_loss")) s_loss = NaN
if (!exists("r_loss")) r_loss = NaN
epochs(n) = sprintf("%d epoch%s", n, n == 1 ? "" : "s")
ended(n) = (n < max_epochs) ? "converged after " . epochs(n) : epochs(n)
set title sprintf("Same learning rate (%g) on standardised and raw features\n%s", lr, \
    sub("raw features span 0.001 to 4000: a step that suits one scale throws the loss around"))
set xlabel 'epoch'
set ylabel 'training loss (cross-entropy, log scale)'
set logscale y
if (fmt ne 'dumb') set format y '10^{%L}'
# the last epoch drawn ends the axis, with room for its point
last = (s_n > r_n ? s_n : r_n)
if (last > 0) { set xrange [0:last * 1.03] }
# below the plot: the raw curve fills its top from end to end
eval key_below(2)
set key vertical
plot data using "epoch":"standardised" ls 1 \
          title sprintf("standardised features: %s, training loss %.3g", ended(s_n), s_loss), \
     data using "epoch":"raw_features" ls 2 \
          title sprintf("raw features: %s, training loss %.3g", ended(r_n), r_loss), \
     '+' using (s_n):(s_loss) every ::0::0 with points ls 1 pt 7 ps 1.5 notitle, \
     '+' using (r_n):(r_loss) every ::0::0 with points ls 2 pt 7 ps 1.5 notitle
