# time.gp — lab 04: time per allreduce against message size, log-log: flat
# where latency dominates (alpha), a slope of one where bandwidth does (beta).
# Variables: data (metrics.csv), model (fit.csv), algos, P, dtype.
set title sprintf("Time per allreduce, %d ranks, %s\n%s", P, dtype, \
    sub("left: latency-bound (a fixed cost per message); right: bandwidth-bound (time grows with bytes)"))
set logscale xy
set format x '%.0b%B'
set xlabel 'message size per rank (bytes)'
set ylabel 'time (us)'
set key top left
plot for [k = 1:words(algos)] data using "bytes":(column(word(algos, k).'_us')) with linespoints ls k \
        title word(algos, k), \
     for [k = 1:words(algos)] model using "bytes":(column(word(algos, k).'_us')) with lines ls k dt 2 lw 1.2 \
        notitle
