# spread.gp — lab 02: one class's share of train and val over many seeds, for
# random and stratified splits. Variables: data (spread.csv), rare (the
# class's name), balanced (1: every class has the same number of rows, so the
# class is simply the first; 0: it is the rarest), pool_share (its share of
# all the rows split), n_train, n_val (the parts' sizes: the smaller part
# scatters more).
if (!exists("rare")) rare = 'the class'
if (!exists("balanced")) balanced = 0
if (!exists("pool_share")) pool_share = NaN
if (!exists("n_train")) n_train = 0
if (!exists("n_val")) n_val = 0
which = balanced ? "every class is the same size" : "the rarest class"
set title sprintf("Share of '%s' in each part, one point per seed\n%s; %.1f%% of all the rows split", rare, which, 100 * pool_share)
set xlabel 'seed of the split'
set ylabel sprintf("share of '%s' in the part (%%)", rare)
eval key_below(2)
set key maxrows 2
rows(n) = n > 0 ? sprintf(" (%d rows)", n) : ""
# the stratified marks are drawn large and hollow (train) and small and full
# (val): on one line, one would hide the other
plot data using "seed":(100 * column("random_train")) with points ls 5 pt 7 ps 0.7 title 'random split: train' . rows(n_train), \
     data using "seed":(100 * column("random_val")) with points ls 2 pt 7 ps 0.7 title 'random split: val' . rows(n_val), \
     data using "seed":(100 * column("stratified_train")) with points ls 1 pt 6 ps 1.2 title 'stratified split: train', \
     data using "seed":(100 * column("stratified_val")) with points ls 6 pt 7 ps 0.5 title 'stratified split: val'
