# training.gp — lab 05: training loss and validation accuracy per epoch.
# Variables: data (metrics.csv), mode, P.
set title sprintf("Lab 05: %s training on %d rank(s)", mode, P)
set xlabel 'epoch'
set ylabel 'training loss'
set y2label 'validation accuracy'
set y2range [0:1]
set y2tics 0.2 nomirror
set key center right
plot data using "epoch":"loss" with linespoints ls 1 title 'loss', \
     data using "epoch":"val_accuracy" axes x1y2 with linespoints ls 3 title 'validation accuracy'
