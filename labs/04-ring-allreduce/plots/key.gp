# key.gp — lab 04: what busbw.gp and time.gp share. Plots every algorithm's
# measurement (solid, points), then every α–β fit (dashed); the key, below
# the plot and clear of the data, fills its two columns top to bottom, so
# each row pairs an algorithm's measurement with its fit. Set before
# loading: y (the column's suffix, "busbw" or "us") and yscale (its factor).
meas_key(k) = sprintf("%s: %.3g GB/s measured", word(algos, k), word(meas, k) + 0)
fit_key(k) = sprintf("fit: α = %.3g µs, %.3g GB/s", word(alpha, k) + 0, word(fitbw, k) + 0)
set key below center vertical maxrows words(algos) height 1 noopaque
# a size where the model is not drawn (nan) breaks its dashed line, instead
# of a segment bridging the gap as a missing value would
unset datafile missing
col(k) = sprintf("(column('%s_%s') * %g)", word(algos, k), y, yscale)
cmd = 'plot'
do for [k = 1:words(algos)] {
    cmd = cmd . sprintf("%s data using 'bytes':%s with linespoints ls %d title meas_key(%d)", k > 1 ? ',' : '', \
                        col(k), k, k)
}
do for [k = 1:words(algos)] {
    cmd = cmd . sprintf(", model using 'bytes':%s with lines ls %d dt 2 lw 1.2 title fit_key(%d)", col(k), k, k)
}
eval cmd
