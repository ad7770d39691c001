# traffic.gp — lab 07: the bytes sent per step, measured against the closed form.
# Variables: data (metrics.csv).
set title "Bytes sent per step, every rank together: measured and the ring's closed form"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set boxwidth 0.9
set xlabel 'epoch'
set ylabel 'bytes per step'
stats data using 'bytes_per_step_model' nooutput name 'B'
set yrange [0:(B_max > 0 ? 1.25 * B_max : 1)] # one rank sends nothing: an empty plot, not a warning
set key top left
plot data using 'bytes_per_step':xtic(1) title 'measured (the transport counters)' ls 1, \
     data using 'bytes_per_step_model' title 'closed form (dl\_ring\_bytes)' ls 2
