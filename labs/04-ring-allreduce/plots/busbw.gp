# busbw.gp — lab 04: bus bandwidth against message size, one line per
# algorithm (points: measured), with the α–β model fitted to each drawn
# dashed over it. Variables: data (metrics.csv), model (fit.csv), algos
# (space-separated names), P, dtype.
set title sprintf("Allreduce bus bandwidth, %d ranks, %s\n%s", P, dtype, \
    sub("busbw = bytes / time x 2(P-1)/P; dashed: t = alpha + beta * bytes fitted to each"))
set logscale x 2
set format x '%.0b%B'
set xlabel 'message size per rank (bytes)'
set ylabel 'bus bandwidth (GB/s)'
set yrange [0:*]
set key top left
plot for [k = 1:words(algos)] data using "bytes":(column(word(algos, k).'_busbw')) with linespoints ls k \
        title word(algos, k), \
     for [k = 1:words(algos)] model using "bytes":(column(word(algos, k).'_busbw')) with lines ls k dt 2 lw 1.2 \
        notitle
