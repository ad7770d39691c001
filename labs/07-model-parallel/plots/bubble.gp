# bubble.gp — lab 07: the bubble (the share of the stages' time idle) against the micro-batches, measured
# for both schedules from their recorded orders, and the closed form (P − 1)/(m + P − 1) for 2 and 4 stages.
# Variables: data (schedules.csv), P (this run's stages).
set title sprintf("The bubble shrinks as micro-batches grow: measured on %d stages, and (P - 1)/(m + P - 1)", P)
set xlabel 'micro-batches per step, m'
set ylabel 'bubble (idle share)'
set logscale x 2
set xrange [0.8:10]
set yrange [0:1]
set key top right
f(m, p) = (p - 1.0) / (m + p - 1.0)
plot f(x, 2) title 'closed form, P = 2' with lines ls 3, \
     f(x, 4) title 'closed form, P = 4' with lines ls 4, \
     data using (column('schedule') == 0 ? column('m') : NaN):'bubble' title sprintf('GPipe, P = %d', P) \
          with points ls 1 pt 7 ps 1.6, \
     data using (column('schedule') == 1 ? column('m') : NaN):'bubble' title sprintf('1F1B, P = %d', P) \
          with points ls 2 pt 6 ps 2.2 lw 2
