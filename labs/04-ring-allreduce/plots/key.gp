# key.gp — lab 04: what busbw.gp and time.gp share. Plots every algorithm's
# measurement (solid, points), then every α–β fit (dashed), each a
# continuous curve over the whole range of sizes, t = α + β·bytes (so the
# reader sees where the model holds and where the machine departs from it);
# the key, below the plot and clear of the data and of the x label, fills
# its two columns top to bottom, so each row pairs an algorithm's
# measurement with its fit. The x axis labels both ends of the sizes
# measured. Set before loading: y (the column's suffix, "busbw" or "us")
# and yscale (its factor); the fits need alpha (µs), beta (s/byte) and
# factor (the busbw factor), one word per algorithm.
meas_key(k) = sprintf("%s: %.3g GB/s measured", word(algos, k), word(meas, k) + 0)
fit_key(k) = sprintf("fit: α = %.3g µs, %.3g GB/s", word(alpha, k) + 0, word(fitbw, k) + 0)
eval key_below(words(algos))
set key vertical maxrows words(algos) noautotitle reverse Left samplen 2.5
# the sizes measured, both ends labelled: the style's labels every 16x
# (1 B, 16 B, 256 B, 4 KiB, ...) and the smallest and largest size, a
# label of the grid dropped where it would stand within 4x of an end's
stats data using 'bytes' name 'BY' nooutput
i_lo = int(floor(log(BY_min) / log(2) + 0.5))
i_hi = int(floor(log(BY_max) / log(2) + 0.5))
set xrange [2.0**i_lo / 1.3 : 2.0**i_hi * 1.3]
set xtics ()
do for [i = i_lo:i_hi] {
    labelled = i == i_lo || i == i_hi || (i % 4 == 0 && i - i_lo > 2 && i_hi - i > 2)
    set xtics add (labelled ? bytes_label(2.0**i) : '' 2.0**i labelled ? 0 : 1)
}
set samples 300
# the model's time in seconds, and what the plot shows of it
fit_t(k, b) = (word(alpha, k) + 0) * 1e-6 + (word(beta, k) + 0) * b
fit_y(k, b) = y eq 'busbw' ? (word(factor, k) + 0) * b / fit_t(k, b) / 1e9 : fit_t(k, b)
col(k) = sprintf("(column('%s_%s') * %g)", word(algos, k), y, yscale)
cmd = 'plot'
do for [k = 1:words(algos)] {
    cmd = cmd . sprintf("%s data using 'bytes':%s with linespoints ls %d title meas_key(%d)", k > 1 ? ',' : '', \
                        col(k), k, k)
}
do for [k = 1:words(algos)] {
    cmd = cmd . sprintf(", (fit_t(%d, x) > 0 ? fit_y(%d, x) : 1/0) with lines ls %d dt (12, 8) lw 1.5 title fit_key(%d)", \
                        k, k, k, k)
}
eval cmd
