# spread.gp — lab 02: the rarest class's share of train and val over many seeds.
# Variables: data (spread.csv), rare (the class's name).
if (!exists("rare")) rare = 'rarest class'
set title sprintf("Share of '%s' in each part, one point per seed\n%s", rare, sub("random splits scatter; stratified splits hold it fixed"))
set xlabel 'seed of the split'
set ylabel sprintf("share of '%s' in the part (%%)", rare)
eval key_below(2)
set key maxrows 2
# the stratified marks are drawn large and hollow (train) and small and full
# (val): on one line, one would hide the other
plot data using "seed":(100 * column("random_train")) with points ls 5 pt 7 ps 0.5 title 'random split: train', \
     data using "seed":(100 * column("random_val")) with points ls 2 pt 7 ps 0.5 title 'random split: val', \
     data using "seed":(100 * column("stratified_train")) with points ls 1 pt 6 ps 1.0 title 'stratified split: train', \
     data using "seed":(100 * column("stratified_val")) with points ls 6 pt 7 ps 0.4 title 'stratified split: val'
