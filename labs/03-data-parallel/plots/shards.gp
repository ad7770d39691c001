# shards.gp — lab 03: how many rows of each class every rank gets in epoch 1,
# as the difference from an even share (the class's rows over P), with random
# shards (bars, one per rank) and stratified shards (black marks): the counts
# themselves are all near rows/(P·classes), so drawn as they are the
# differences would be slivers on tall bars, or look like cliffs on an axis
# that does not start at 0. Variables: data (shards.csv, the class names in
# its first column), P.
rnd(r) = column(sprintf("random_rank%d", r))
str(r) = column(sprintf("stratified_rank%d", r))
even(dummy) = (sum [r = 0:P-1] rnd(r)) / P
# the largest difference of a random shard, in rows and as a share of the even count
stats data using (d = 0, e = even(0), sum [r = 0:P-1] (d = abs(rnd(r) - e) > d ? abs(rnd(r) - e) : d, 0), d) \
    name "DEV" nooutput
stats data using (even(0)) name "EVEN" nooutput
stats data using (d = 0, e = even(0), sum [r = 0:P-1] (d = abs(str(r) - e) > d ? abs(str(r) - e) : d, 0), d) \
    name "SDEV" nooutput
set title sprintf("Rows of each class per rank minus an even share, epoch 1 (%d ranks)\n%s", P, \
    sub(sprintf("random: up to %.0f rows off (%.1f%% of about %.0f); stratified: %s", \
        DEV_max, 100 * DEV_max / EVEN_min, EVEN_mean, \
        SDEV_max < 0.01 ? "exactly even" : sprintf("within %.2g row(s)", SDEV_max))))
w = 0.8 / P
x(r) = column(0) + (r - (P - 1) / 2.0) * w
set style fill solid 0.85 border -1
set boxwidth w
set xlabel 'class'
set xtics rotate by -30 left nomirror
set xrange [-0.6:*]
set offsets 0, 0.6, 0, 0
set ylabel "rows minus the even share"
lim = DEV_max > 1 ? DEV_max * 1.25 : 2
set yrange [-lim:lim]
set arrow 1 from graph 0, first 0 to graph 1, first 0 nohead lc rgb '#444444' front
eval key_below((P + 2) / 3 + 1)
plot data using 0:(NaN):xtic(1) notitle, \
     for [r = 0:P-1] data using (x(r)):(rnd(r) - even(0)) with boxes ls (r % 6 + 1) \
         title sprintf('random, rank %d', r), \
     for [r = 0:P-1] data using (x(r)):(str(r) - even(0)) with points pt 13 ps 1.2 lc rgb '#000000' \
         title (r == 0 ? 'stratified, each rank' : '')
