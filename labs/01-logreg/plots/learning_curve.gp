# learning_curve.gp — lab 01: training and validation loss, validation accuracy.
# Variables: data (metrics.csv), subtitle.
if (!exists("subtitle")) subtitle = ''
set title sprintf("Lab 01 learning curve\n%s", sub(subtitle))
set xlabel 'epoch'
set ylabel 'loss (cross-entropy, log scale)'
set logscale y
set y2label 'validation accuracy (share of rows right)'
set y2range [0.5:1.0]
set y2tics 0.1 nomirror
# below the plot: inside, the box would hide a curve wherever it sat
eval key_below(1)
plot data using "epoch":"train_loss" ls 1 title 'train loss (objective)', \
     data using "epoch":"val_loss" ls 2 title 'validation loss', \
     data using "epoch":"val_acc" axes x1y2 ls 3 title 'validation accuracy'
