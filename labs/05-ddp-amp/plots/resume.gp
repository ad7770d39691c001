# resume.gp — lab 05 part 2: a run stopped after step k and resumed from its
# checkpoint, drawn over the run that never stopped. With a correct
# checkpoint the resumed points sit on the uninterrupted line, bit for bit.
# Variables: full, cut, resumed (each an amp.csv: step, loss, scale, ...), k.
set multiplot layout 2,1 title sprintf("Lab 05: stopped after step %d and resumed, over the run that never stopped", k)
set xlabel 'optimizer step'
set arrow 1 from k + 0.5, graph 0 to k + 0.5, graph 1 nohead dt 2 lc rgb "gray"
set ylabel 'training loss'
set key top right
plot full using "step":"loss" with lines ls 1 title 'never stopped', \
     cut using "step":"loss" with points ls 2 pt 7 ps 1.2 title 'until the stop', \
     resumed using "step":"loss" with points ls 3 pt 6 ps 1.6 title 'resumed from the checkpoint'
set ylabel 'loss scale'
set key bottom right
set logscale y 2
set format y pow2
plot full using "step":"scale" with steps ls 1 title 'never stopped', \
     cut using "step":"scale" with points ls 2 pt 7 ps 1.2 title 'until the stop', \
     resumed using "step":"scale" with points ls 3 pt 6 ps 1.6 title 'resumed'
unset multiplot
