# bench_bars.gp — a labelled bar chart of rates (GB/s) with a target line.
# Variables: data (CSV: kernel,GBps), target (GB/s; 0 = none).
if (!exists("target")) target = 0
set title "Lab 01: gradient pass vs a stream read of the same bytes (one thread)"
set ylabel 'GB/s'
set style data histograms
set style fill solid 0.8 border -1
set boxwidth 0.6
set yrange [0:*]
set key top right
unset xtics
set xtics nomirror
plot data using "GBps":xtic(1) ls 1 title 'measured', \
     (target > 0 ? target : 1/0) with lines ls 7 title '60% of the stream rate (target)'
