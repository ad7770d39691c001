# stage_memory.gp — lab 07: the micro-batches' activations each stage held at once, GPipe against 1F1B,
# measured by the kit's slots, beside the closed forms m and min(m, P − s).
# Variables: data (stages.csv), P (stages), m (micro-batches).
set title sprintf("Activations held at once per stage, %d micro-batches: GPipe holds all, 1F1B at most P - s", m)
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set xlabel 'stage s'
set ylabel "micro-batches' activations"
set yrange [0:m * 1.3]
set key top right
plot data using 'gpipe':xtic(1) title 'GPipe (measured)' ls 1, \
     data using '1f1b' title '1F1B (measured)' ls 2, \
     data using ($0 + 0.17):'1f1b_model' with points ls 7 pt 2 ps 2 lw 2 title 'min(m, P - s)'
