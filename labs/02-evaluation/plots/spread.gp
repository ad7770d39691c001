# spread.gp — lab 02: the rarest class's share of train and val over many seeds.
# Variables: data (spread.csv), rare (the class's name).
if (!exists("rare")) rare = 'rarest class'
set title sprintf("Share of '%s' in each part, one point per seed\n%s", rare, sub("random splits scatter; stratified splits hold it fixed"))
set xlabel 'seed'
set ylabel sprintf("share of '%s'", rare)
set key outside right top vertical
plot data using "seed":"random_train" with points ls 5 pt 7 ps 0.5 title 'random: train', \
     data using "seed":"random_val" with points ls 2 pt 7 ps 0.5 title 'random: val', \
     data using "seed":"stratified_train" with points ls 1 pt 5 ps 0.5 title 'stratified: train', \
     data using "seed":"stratified_val" with points ls 6 pt 5 ps 0.5 title 'stratified: val'
