# plan.gp — lab 07: the planner's layouts, memory a GPU against step time, both log scale: tensor groups inside a
# node and across nodes apart, the GPU's memory as a line (right of it nothing fits), the chosen layout marked.
# Variables: data (plan.csv), mem (GB a GPU), nodes, G (GPUs a node), gpu (the profile's name).
# the chosen layout's numbers, one column at a time (the rows but the chosen one give NaN)
chosen(c) = column('best') > 0.5 ? column(c) : NaN
stats data using (chosen('mem_gb')) nooutput name 'BX'
stats data using (chosen('step_s')) nooutput name 'BY'
stats data using (chosen('d')) nooutput name 'D'
stats data using (chosen('t')) nooutput name 'T'
stats data using (chosen('p')) nooutput name 'P'
stats data using (chosen('zero')) nooutput name 'Z'
set title sprintf("Every layout of %d nodes x %d GPUs (%s): memory a GPU against the step's time", nodes, G, gpu)
set logscale xy 10
set format x pow10
set format y pow10
set xlabel 'memory a GPU (GB, log scale)'
set ylabel 'step time (s, log scale)'
set key top right
set arrow from mem, graph 0 to mem, graph 1 nohead ls 7
set label sprintf('%g GB a GPU', mem) at mem, graph 0.95 right offset -0.5, 0
set label sprintf('the fastest that fits: d %d x t %d x p %d, ZeRO %d', D_min, T_min, P_min, Z_min) \
    at graph 0.52, graph 0.5 left
set arrow from graph 0.6, graph 0.46 to first BX_min, first BY_min ls 7
plot data using (column('tensor_inside_node') > 0.5 ? column('mem_gb') : NaN):'step_s' \
          title 'tensor group inside a node' with points ls 1 pt 7 ps 1.0, \
     data using (column('tensor_inside_node') < 0.5 ? column('mem_gb') : NaN):'step_s' \
          title 'tensor group across nodes' with points ls 2 pt 5 ps 1.0, \
     data using (column('best') > 0.5 ? column('mem_gb') : NaN):'step_s' title 'chosen' \
          with points ls 7 pt 6 ps 3 lw 3
