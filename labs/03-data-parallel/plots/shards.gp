# shards.gp — lab 03: how many rows of each class every rank gets in epoch 1,
# with random shards and with stratified shards. Variables: data (shards.csv,
# the class names in its first column), P.
set title sprintf("Rows of each class per rank, epoch 1 (%d ranks)\n%s", P, sub("random shards: the counts wander; stratified: equal within one row"))
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set xlabel 'class'
set xtics rotate by -30 left nomirror
set ylabel 'rows in the shard'
set key outside right top vertical
set yrange [*:*]
plot for [r=0:P-1] data using (column(sprintf("random_rank%d", r))):xtic(1) title sprintf('random, rank %d', r) ls (r % 6 + 1), \
     for [r=0:P-1] data using (column(sprintf("stratified_rank%d", r))) title sprintf('stratified, rank %d', r) ls (r % 6 + 1) fs pattern 4
