# schedules.gp — lab 07: the pipeline's schedule as its famous picture, GPipe above 1F1B: a row per stage,
# a box per forward (light) and backward (dark) of each micro-batch, its number inside; white is the bubble.
# The times are the schedule the stages' recorded orders make when a forward takes 1 and a backward 2.
# Variables: data (timeline.csv), P (stages), m (micro-batches).
stats data using 'end' nooutput name 'T'
set multiplot layout 2,1 title sprintf("One step of %d micro-batches on %d stages: forward (light) takes 1, backward (dark) 2", m, P)
set xrange [0:T_max]
set yrange [P - 0.4:-0.6] # stage 0 on top
set ytics 1
set xlabel 'time (forward = 1)'
set ylabel 'stage'
set style fill solid 0.85 border rgb '#000000'
unset key
do for [sc = 0:1] {
    set title (sc == 0 ? 'GPipe: every forward, then every backward' : '1F1B: one forward, one backward')
    plot data using (column('schedule') == sc ? (column('start') + column('end')) / 2 : NaN):'stage': \
              ((column('end') - column('start')) / 2):(0.4): \
              (column('backward') > 0.5 ? 0xD55E00 : 0x56B4E9) with boxxyerror lc rgb variable, \
         data using (column('schedule') == sc ? (column('start') + column('end')) / 2 : NaN):'stage': \
              (sprintf('%d', column('micro'))) with labels tc rgb '#000000'
}
unset multiplot
