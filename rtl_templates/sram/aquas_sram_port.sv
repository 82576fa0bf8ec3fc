    // port ${p}
    if (en${p}) begin
      if (we${p}) mem[addr${p}] <= wdata${p};
      else rdata${p} <= mem[addr${p}];
    end
