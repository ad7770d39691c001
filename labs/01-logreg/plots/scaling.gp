# scaling.gp — lab 01: the same learning rate on standardised and raw features.
# Variables: data (scaling.csv), lr.
if (!exists("lr")) lr = 0
set title sprintf("Same learning rate (%g) on standardised and raw features\n%s", lr, \
    sub("raw features span 0.001 to 4000: a step that suits one scale throws the loss around"))
set xlabel 'epoch'
set ylabel 'training loss (log scale)'
set logscale y
if (fmt ne 'dumb') set format y '10^{%L}'
set key top right
plot data using "epoch":"standardised" ls 1 title 'standardised features', \
     data using "epoch":"raw_features" ls 2 title 'raw features'
