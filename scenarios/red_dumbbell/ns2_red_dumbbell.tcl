# ns-2 (2.35) counterpart of red_dumbbell_<n>.toml with an explicit RTT list:
#   ns ns2_red_dumbbell.tcl N "RTT0 RTT1 ..." DURATION [ns3tcp]
# With `ns3tcp` the TCPs take fairgate's (ns-3's) defaults instead: timestamps, a delayed-ACK
# sink (every second segment, 200 ms) and 1 ms ticks.
# N Sack1 flows (1000-byte segments plus ns-2's 40 header bytes, window 200, initial window 1,
# RTO 1 s initial and minimum as fairgate's defaults, 10 ms ticks) over a 10 Mb/s, 5 ms
# bottleneck with a 100-packet gentle RED queue in packet mode (5/15, q_weight 0.002,
# linterm 50, wait);
# 100 Mb/s access links carrying 1 ms plus half of each flow's extra delay on either side
# (fairgate's rtt_split = "even"). Prints the bottleneck's utilisation, time-averaged queue
# (sampled every 1 ms), early drops and other drops, as measure.py reports fairgate's; on
# stderr, per flow: packets acknowledged, retransmission timeouts and retransmitted packets.
set n [lindex $argv 0]
set rtts [lindex $argv 1]
set duration [lindex $argv 2]
set ns3tcp [expr {[lindex $argv 3] == "ns3tcp"}]
set ns [new Simulator]
Agent/TCP set packetSize_ 1000
Agent/TCP set window_ 200
Agent/TCP set windowInit_ 1
Agent/TCP set minrto_ 1.0
Agent/TCP set rtxcur_init_ 1.0
Agent/TCP set tcpTick_ 0.01
set sink_class Agent/TCPSink/Sack1
if {$ns3tcp} {
  Agent/TCP set tcpTick_ 0.001
  Agent/TCP set timestamps_ true
  Agent/TCPSink/DelAck set interval_ 0.2
  set sink_class Agent/TCPSink/Sack1/DelAck
}
Queue/RED set thresh_ 5
Queue/RED set maxthresh_ 15
Queue/RED set q_weight_ 0.002
Queue/RED set linterm_ 50
Queue/RED set gentle_ true
Queue/RED set wait_ true
Queue/RED set mean_pktsize_ 500
Queue/RED set queue_in_bytes_ false
Queue/RED set bytes_ false
set L [$ns node]
set R [$ns node]
$ns duplex-link $L $R 10Mb 5ms RED
$ns queue-limit $L $R 100
$ns queue-limit $R $L 100
set fmon [$ns makeflowmon Fid]
$ns attach-fmon [$ns link $L $R] $fmon 1
set rng [new RNG]
$rng seed 1
for {set i 0} {$i < $n} {incr i} {
  set half [expr [lindex $rtts $i] / 2.0]
  set d [expr 0.001 + ($half - 0.005 - 0.002) / 2.0]
  set s($i) [$ns node]
  set r($i) [$ns node]
  $ns duplex-link $s($i) $L 100Mb ${d}s DropTail
  $ns duplex-link $R $r($i) 100Mb ${d}s DropTail
  $ns queue-limit $s($i) $L 1000
  set tcp($i) [new Agent/TCP/Sack1]
  set sink($i) [new $sink_class]
  $ns attach-agent $s($i) $tcp($i)
  $ns attach-agent $r($i) $sink($i)
  $ns connect $tcp($i) $sink($i)
  set ftp($i) [new Application/FTP]
  $ftp($i) attach-agent $tcp($i)
  $ns at [$rng uniform 0 1] "$ftp($i) start"
}
set queued 0
set samples 0
proc sample {} {
  global ns fmon queued samples
  incr queued [$fmon set pkts_]
  incr samples
  $ns at [expr [$ns now] + 0.001] "sample"
}
proc finish {} {
  global fmon queued samples duration tcp n
  for {set i 0} {$i < $n} {incr i} {
    puts stderr [format "flow %d acked_pkts %d timeouts %d retransmitted_pkts %d" $i \
      [$tcp($i) set ack_] [$tcp($i) set nrexmit_] [$tcp($i) set nrexmitpack_]]
  }
  set bits [expr [$fmon set bdepartures_] * 8.0]
  set early [$fmon set epdrops_]
  puts [format "utilisation %.3f mean_queue_pkts %.3f drops_early %d other_drops %d" \
    [expr $bits / (10e6 * $duration)] [expr double($queued) / $samples] $early \
    [expr [$fmon set pdrops_] - $early]]
  exit 0
}
$ns at 0 "sample"
$ns at $duration "finish"
$ns run
