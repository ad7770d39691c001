# timeline.gp — lab 05: one steady step on rank 0: compute on the top row,
# each bucket's allreduce on a row of its own below, from its start to the
# end of its wait. Variables: data (timeline.csv: kind, id, t0_ms, t1_ms,
# lane), mode, P. Kinds: 0 step, 1 forward, 2 backward (id = layer),
# 3 optimizer, 4 allreduce (id = its number in the step).
set title sprintf("Lab 05: one step of %s on rank 0 of %d (this machine's clock: read the order)", mode, P)
set xlabel 'time since the step began (ms)'
stats data using ($1 == 4 ? $2 : NaN) name "ID" nooutput
set ytics ("compute" 1)
do for [b = 0:int(ID_max)] { set ytics add (sprintf("allreduce %d", b) -0.5 * b) }
set yrange [-0.5 * ID_max - 0.6:1.6]
set key outside bottom horizontal
set style fill solid 0.8 border -1
row(k, id) = k == 4 ? -0.5 * id : 1
col(k) = k == 1 ? 0x4c72b0 : k == 2 ? 0xdd8452 : k == 3 ? 0xc44e52 : 0x55a868
plot data using (($3+$4)/2):(row($1,$2)):(($4-$3)/2):(0.18):(col($1)) every ::1 with boxxyerror lc rgb variable notitle, \
     data using (($3+$4)/2):(row($1,$2)+0.3):($1 == 2 ? sprintf("L%d", $2) : "") every ::1 with labels font ",8" notitle, \
     NaN with boxes lc rgb 0x4c72b0 title 'forward', NaN with boxes lc rgb 0xdd8452 title 'backward (layer L)', \
     NaN with boxes lc rgb 0x55a868 title 'allreduce (start to end of its wait)', NaN with boxes lc rgb 0xc44e52 title 'optimizer'
