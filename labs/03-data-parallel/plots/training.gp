# training.gp — lab 03: loss and test accuracy per epoch, and the largest
# parameter difference across ranks (0 when the ranks stay in sync).
# Variables: data (metrics.csv), mode, P.
set title sprintf("Lab 03: %s training on %d rank(s)\n%s", mode, P, sub("|Delta param| across ranks: 0 means one model; more means P models"))
set multiplot layout 1,2
set xlabel 'epoch'
set ylabel 'training loss'
set y2label 'test accuracy'
set y2range [0:1]
set y2tics 0.2 nomirror
set key center right
plot data using "epoch":"loss" with linespoints ls 1 title 'loss', \
     data using "epoch":"test_acc" axes x1y2 with linespoints ls 3 title 'test accuracy'
unset y2label
unset y2tics
set ylabel 'largest |parameter difference| across ranks'
set yrange [0:1e-6<*]
set key top left
plot data using "epoch":"param_diff" with linespoints ls 2 title '|Delta param|'
unset multiplot
