# timeline.gp — lab 05: one steady step of the run's mode, twice.
# Top, projected on the profile's GPUs (timeline_projected.csv, from the
# step's recorded order and cost, dl_project_step): compute on one row and
# the communication stream on another, each bucket's allreduce drawn from
# when it runs to when it is done; what runs past the last layer's backward
# is the exposed communication, shaded. Bottom, measured on this machine's
# rank 0 (timeline.csv): the same compute and, a row per allreduce, when it
# was launched (a triangle) and when the rank's wait for it returned (a
# square); a blocking allreduce (ddp-flat's whole gradient, AMP's inf/NaN
# flag) is a bar, the step waits for it where it is called.
# Variables: data (timeline.csv: rank0_kind, id, t0_ms, t1_ms, lane, async,
# bytes), projected (timeline_projected.csv: kind, id, t0_ms, t1_ms, bytes),
# mode, P, profile, gpus, bwd_end and exposed (the projected step's end of
# backward and exposed communication, ms), device, backend.
# Kinds: 0 step, 1 forward, 2 backward (id = layer; -1: earlier
# micro-batches), 3 optimizer, 4 allreduce (id = its number in the step).
stats data using ($1 == 4 ? $2 : NaN) name "ID" nooutput
stats data using 4 name "T" nooutput
stats data using ($1 == 2 ? $4 : NaN) name "BWD" nooutput
stats projected using 4 name "PT" nooutput
stats data using ($1 == 4 && $6 == 0 ? 1 : 0) name "BLOCKING" nooutput
n_rows = ID_max + 1
step_ms = PT_max
col(k) = k == 1 ? 0x0072B2 : k == 2 ? 0xE69F00 : k == 3 ? 0xCC79A7 : 0x009E73
bucket_col(id) = int(id) % 2 == 0 ? 0x009E73 : 0x7fcdb4
size(b) = b >= 2**20 ? sprintf("%.3g MiB", b / 2.0**20) : b >= 1024 ? sprintf("%.3g KiB", b / 1024.0) : sprintf("%d B", b)
name(id, async, bytes) = sprintf("%s %d: %s", async > 0 ? "bucket" : "blocking", id, size(bytes))
layer(k, id) = k == 2 ? (id >= 0 ? sprintf("L%d", id) : "") : k == 3 ? "opt" : k == 1 ? "fwd" : ""
set multiplot title sprintf("Lab 05: one step of %s, %d rank(s)\n%s", mode, P, \
    sub(sprintf("top: projected on %d GPUs of %s; bottom: measured here (rank 0, %s, %s): read its order", \
        gpus, profile, device, backend)))
set lmargin 17
set rmargin 3
set style fill solid 1.0 border lc rgb '#333333'
unset mxtics

# ---- projected: compute, the network's stream, the exposed part shaded ----
set origin 0, 0.53
set size 1, 0.39
set tmargin 1.5
set bmargin 3
set xrange [0:step_ms * 1.03]
set yrange [-0.75:1.45]
set ytics ("compute" 1, "network" 0)
set xlabel 'projected time since the step began (ms)' offset 0, 0.4
unset key
if (exposed > 0.0005 * step_ms) {
    set object 1 rect from bwd_end, graph 0 to bwd_end + exposed, graph 1 fc rgb '#f4cccc' fs solid 1.0 noborder behind
    set label 1 sprintf("exposed communication: %.3g ms, %.1f%% of the step", exposed, 100 * exposed / step_ms) \
        at bwd_end + exposed, first -0.55 right tc rgb '#a02020'
} else {
    set label 1 "no communication exposed: backward hid all of it" at graph 0.02, first -0.55 left tc rgb '#444444'
}
plot projected using (($3 + $4) / 2):($1 == 4 ? 0 : 1):(($4 - $3) / 2):(0.3):($1 == 4 ? bucket_col($2) : col($1)) \
         with boxxyerror lc rgb variable, \
     projected using (($3 + $4) / 2):($1 == 4 ? 0 : 1):($1 == 4 ? sprintf("b%d", $2) : layer($1, $2)) \
         with labels tc rgb 'white'
unset object 1
unset label

# ---- measured: compute, and each allreduce's launch and the end of its wait ----
set origin 0, 0
set size 1, 0.53
set tmargin 1
eval key_below(BLOCKING_sum > 0 ? 2 : 1)
set xrange [0:T_max * 1.02]
set yrange [-0.5 * ID_max - 0.5:1.6]
set ytics ()
set ytics add ("compute" 1)
do for [i = 0:ID_max] { set ytics add (sprintf("%d", i) -0.5 * i) }
set ylabel 'allreduce' offset 1, 0
set xlabel "measured time since the step began (ms, this machine's clock)" offset 0, 0.4
row(k, id) = k == 4 ? -0.5 * id : 1
# the optimizer takes microseconds beside backward's milliseconds here: a
# span is drawn at least this wide (ms), so that it shows
wmin = 0.006 * T_max
half(a, b) = (b - a) > wmin ? (b - a) / 2 : wmin / 2
plot data using ($1 == 4 ? NaN : ($3 + $4) / 2):(row($1, $2)):(half($3, $4)):(0.2):(col($1)) every ::1 \
         with boxxyerror lc rgb variable notitle, \
     data using (($3 + $4) / 2):(row($1, $2)):($1 == 4 || ($4 - $3) < 0.04 * T_max ? "" : layer($1, $2)) every ::1 \
         with labels tc rgb 'white' notitle, \
     data using ($1 == 4 && $6 > 0 ? $3 : NaN):(row($1, $2)):($4 - $3):(0) every ::1 with vectors nohead \
         lc rgb '#009E73' lw 2 notitle, \
     data using ($1 == 4 && $6 == 0 ? ($3 + $4) / 2 : NaN):(row($1, $2)):(half($3, $4)):(0.15) every ::1 \
         with boxxyerror fc rgb '#8172b3' title (BLOCKING_sum > 0 ? 'blocking allreduce' : ''), \
     data using ($1 == 4 && $6 > 0 ? $3 : NaN):(row($1, $2)) every ::1 with points pt 9 ps 1.5 lc rgb '#009E73' \
         title 'allreduce launched', \
     data using ($1 == 4 && $6 > 0 ? $4 : NaN):(row($1, $2)) every ::1 with points pt 5 ps 1.1 lc rgb '#005a40' \
         title "its wait returned"
unset multiplot
