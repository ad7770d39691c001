# scaling.gp — lab 01: the same learning rate on standardised and raw features.
# Variables: data (scaling.csv), lr, batch (words: "full batch", "batch 32 (11
# steps per epoch)"), max_epochs (--epochs); each run's last epoch and
# training loss, as summary.json has them: s_n, s_loss (standardised), r_n,
# r_loss (raw), NaN when not finite; s_nan, r_nan: the first epoch whose loss
# is NaN or inf (-1: none); zigzag (1: the raw run goes up and down at most
# epochs); std_lo, std_hi: the narrowest and widest feature's std (training
# rows). The key gives each run's end, and a point marks where it stopped;
# a zig-zagging raw run is drawn as dots (a line would be a solid band) with
# its last epochs enlarged in an inset.
if (!exists("lr")) lr = 0
if (!exists("batch")) batch = ''
if (!exists("max_epochs")) max_epochs = 0
if (!exists("s_n")) s_n = -1
if (!exists("r_n")) r_n = -1
if (!exists("s_loss")) s_loss = NaN
if (!exists("r_loss")) r_loss = NaN
if (!exists("s_nan")) s_nan = -1
if (!exists("r_nan")) r_nan = -1
if (!exists("zigzag")) zigzag = 0
if (!exists("std_lo")) std_lo = NaN
if (!exists("std_hi")) std_hi = NaN
epochs(n) = sprintf("%d epoch%s", n, n == 1 ? "" : "s")
ended(n) = (n < max_epochs) ? "converged after " . epochs(n) : epochs(n)
run_key(what, n, loss, nan) = (nan >= 0) ? sprintf("%s: the loss is NaN from epoch %d", what, nan) \
                                         : sprintf("%s: %s, training loss %.3g", what, ended(n), loss)
set title sprintf("Same learning rate (%g) on standardised and raw features, %s%s", lr, batch, \
    std_lo == std_lo ? sprintf("\nthe raw features' stds run from %.3g to %.3g: no one step suits both", std_lo, std_hi) : "")
set xlabel 'epoch'
set ylabel 'training loss (cross-entropy, log scale)'
set logscale y
set format y pow10
# the last epoch drawn ends the axis, with room for its point
last = (s_n > r_n ? s_n : r_n)
if (last > 0) { set xrange [0:last * 1.03] }
if (last <= 12) { set xtics 1; set mxtics 1 }
# nothing finite to scale the axis on
if (s_nan == 0 && r_nan == 0) { set yrange [0.01:1] }
nan_note = (r_nan >= 0 ? sprintf("raw features: the loss is NaN from epoch %d on\n", r_nan) : "") . \
           (s_nan >= 0 ? sprintf("standardised: the loss is NaN from epoch %d on\n", s_nan) : "")
if (strlen(nan_note) > 0) { set label 1 nan_note . "(not drawn from there)" at graph 0.5, graph 0.6 center front tc rgb '#C62828' }
# below the plot: the raw curve fills its top from end to end
eval key_below(2)
set key vertical
inset = zigzag && r_nan < 0 && r_n >= 30 && fmt ne 'dumb'
raw_with = zigzag ? 'points ls 2 pt 7 ps 0.45' : 'lines ls 2'
set multiplot
# keyentry: a run with no finite point still gets its line in the key
plot data using "epoch":"standardised" ls 1 notitle, \
     data using "epoch":"raw_features" with @raw_with notitle, \
     '+' using (s_n):(s_loss) every ::0::0 with points ls 1 pt 7 ps 1.5 notitle, \
     '+' using (r_n):(r_loss) every ::0::0 with points ls 2 pt 7 ps 1.5 notitle, \
     keyentry with lines ls 1 title run_key("standardised features", s_n, s_loss, s_nan), \
     keyentry with @raw_with title run_key("raw features", r_n, r_loss, r_nan) . \
         (inset ? sprintf(", the last %d epochs enlarged", 12) : "")
if (inset) {
    # the raw run's last 12 epochs, line and points: up, down, up, ... at every epoch
    x0 = 0.50; y0 = 0.36; w = 0.45; h = 0.30
    set object 1 rect from screen x0 - 0.01, screen y0 - 0.01 to screen x0 + w + 0.005, screen y0 + h + 0.01 \
        fc rgb 'white' fs solid 1.0 border lc rgb '#888888' behind
    set origin x0, y0
    set size w, h
    set lmargin 9; set rmargin 1; set tmargin 1.6; set bmargin 2
    unset title; unset key; unset label; unset xlabel; unset ylabel
    unset logscale y
    # the two levels it alternates between label the axis
    stats data using "raw_features" every ::(r_n - 11) name "Z" nooutput
    pad = (Z_max - Z_min) * 0.12 + 1e-30
    set yrange [Z_min - pad:Z_max + pad]
    set ytics (sprintf('%.3g', Z_min) Z_min, sprintf('%.3g', Z_max) Z_max)
    set mytics 1
    set xrange [r_n - 11.5:r_n + 0.5]
    set xtics (r_n - 10, r_n - 5, r_n) nomirror
    set mxtics 5
    set label 3 'raw features, last epochs' at graph 0.02, graph 1.0 left offset 0, 0.7 front
    plot data using "epoch":"raw_features" every ::(r_n - 11) with linespoints ls 2 pt 7 ps 0.9 lw 1.5 notitle
    unset object 1
}
unset multiplot
