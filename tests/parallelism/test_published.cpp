// scratch
#include <catch2/catch.hpp>
#include <cstdio>
#include "parallelism/planner.hpp"
using namespace schedsim;
TEST_CASE("scratch table", "[parallelism][scratch]") {
  AcceleratorCatalogue cat = AcceleratorCatalogue::builtin();
  const AcceleratorSpec& a100 = cat.get("A100-80GB");
  ClusterNetwork net;  // Selene: 8 x 200 Gb/s HDR per DGX A100 node
  net.devices_per_nvlink_domain = 8;
  net.nvlink_Bps = a100.intra_node_link_bytes_per_s;
  net.network_Bps = 25e9;
  struct Row { double b; int heads, hidden, layers, tp, pp, gpus, batch; double tflops; };
  Row rows[] = {{1.7,24,2304,24,1,1,32,512,137},{3.6,32,3072,30,2,1,64,512,138},{7.5,32,4096,36,4,1,128,512,142},
    {18.4,48,6144,40,8,1,256,1024,135},{39.1,64,8192,48,8,2,512,1536,138},{76.1,80,10240,60,8,4,1024,1792,140},
    {145.6,96,12288,80,8,8,1536,2304,148},{310.1,128,16384,96,8,16,1920,2160,155},{529.6,128,20480,105,8,35,2520,2520,163},
    {1008,160,25600,128,8,64,3072,3072,163}};
  for (const Row& r : rows) {
    ModelSpec m = gpt_model("gpt", r.layers, r.hidden, r.heads, 51200, 2048, "");
    ParallelismPlan p; p.tensor=r.tp; p.pipeline=r.pp; p.data=r.gpus/(r.tp*r.pp); p.global_batch=r.batch; p.micro_batch=1;
    p.recompute=Recompute::kFull; p.sequence_parallel=false;
    TimeOptions o; o.flash_attention=false; IterationBreakdown t = iteration_time(m,p,a100,net,o);
    MemoryBreakdown mem = memory_per_device(m,p);
    std::printf("%7.1fB params=%.2fB pub %.0f ours %.1f err %+.1f%% it=%.2fs comp=%.2f el=%.2f tp=%.2f bub=%.2f pp=%.2f dp=%.2f/%.2f mem=%.1fGB\n", r.b, m.total_params()/1e9, r.tflops,
      t.hfu*312, (t.hfu*312-r.tflops)/r.tflops*100, t.iteration_s, t.compute_s, t.elementwise_s, t.tp_comm_s, t.bubble_s, t.pp_comm_s, t.dp_comm_s, t.dp_exposed_s, mem.total_bytes()/1e9);
  }
}
