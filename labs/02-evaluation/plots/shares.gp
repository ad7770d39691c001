# shares.gp — lab 02: each class's share of each part, random vs stratified split.
# Variables: data (shares.csv).
set title sprintf("Class shares per part\n%s", sub("a stratified split gives every part the same mix; a random one drifts"))
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set ylabel 'share of the part'
set xtics rotate by -40 left nomirror
set key outside right top vertical
# log scale: a 2% class must be as visible as a 50% one
set logscale y
set yrange [*:1]
plot data using "random_train":xtic(1) title 'random: train' ls 5, \
     '' using "random_val" title 'random: val' ls 2, \
     '' using "stratified_train" title 'stratified: train' ls 1, \
     '' using "stratified_val" title 'stratified: val' ls 6
