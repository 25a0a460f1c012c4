"""The Insert Benchmark (Mark Callaghan's ibench): load, index, then queries under a background insert rate."""
