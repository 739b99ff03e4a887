-- dbtier's TPC-C-like workload for sysbench 1.0.20 (LuaJIT) on MySQL/MariaDB.
--
-- The five transactions run server-side, as the stored procedures of workloads/sql/tpcc_mysql_procedures.sql
-- (PostgreSQL's tpcc_functions.sql for InnoDB): one CALL, one round trip, one transaction, one sysbench
-- event. This script draws every input, picks the 45/43/4/4/4 mix and counts: NURand (C = 0 for C_ID and
-- OL_I_ID, C_LAST's run constant from the one-row table tpcc_c_last the loader wrote), 60% of payments and
-- order-status by last name, 1% remote lines / 15% remote payments with more than one warehouse, the
-- quantities, and the 1% new-order rollback by an unused item (the procedure rolls the order back and
-- reports o_id -1; counted as a transaction, not as a new order). A new order's lines go as three
-- comma-separated lists, sorted here in (supply warehouse, item) order, the unused item last.
-- READ COMMITTED, as PostgreSQL's. A deadlock (1213) or lock wait timeout (1205) -- the procedure rolls
-- back and raises it again; sysbench's ignorable errors, raised as RESTART_EVENT -- runs the transaction
-- again (new inputs, the same type and warehouse); each such retry is counted. At the end each thread
-- prints one `tpcc-mix:` line with its counts, which workloads/mariadb_tpcc.py adds up.

sysbench.cmdline.options = {
   warehouses = {"Number of warehouses loaded", 1},
}

local NAMES = {"new_order", "payment", "order_status", "delivery", "stock_level"}
local WEIGHTS = {45, 43, 4, 4, 4}
local SYL = {"BAR", "OUGHT", "ABLE", "PRI", "PRES", "ESE", "ANTI", "CALLY", "ATION", "EING"}
local ITEMS, UNUSED_ITEM = 100000, 100001

local rnd = sysbench.rand.uniform
local fmt = string.format

local function nurand(a, x, y, c)
   return ((bit.bor(rnd(0, a), rnd(x, y)) + c) % (y - x + 1)) + x
end

local function lastname(n)
   return SYL[math.floor(n / 100) + 1] .. SYL[math.floor(n / 10) % 10 + 1] .. SYL[n % 10 + 1]
end

local function other_warehouse(w)
   return 1 + (w + rnd(0, W - 2)) % W
end

-- One CALL, one transaction (the procedures return no result set: see tpcc_mysql_procedures.sql).
local function call(sql, ...)
   con:query(fmt(sql, ...))
end

-- A run-time C_LAST (NURand(255, 0, 999) with the run constant), quoted, for the 60% by last name;
-- NULL (by customer id) otherwise.
local function last_or_null()
   if rnd(1, 100) <= 60 then
      return "'" .. lastname(nurand(255, 0, 999, C_RUN)) .. "'"
   end
   return "NULL"
end

-- A new order's lines, sorted in (supply warehouse, item) order with the unused item last, as the
-- comma-separated lists tpcc_new_order takes -> items, supplies, quantities.
function order_lines(w, n, rbk)
   local lines = {}
   for k = 1, n do
      local it = (rbk and k == n) and UNUSED_ITEM or nurand(8191, 1, ITEMS, 0)
      local sw = w
      if W > 1 and rnd(1, 100) == 1 then sw = other_warehouse(w) end
      lines[k] = {it, sw, rnd(1, 10)}
   end
   -- stock rows locked in one order by every new order (no deadlock between two), the unused item last
   table.sort(lines, function(a, b)
      local au, bu = a[1] > ITEMS, b[1] > ITEMS
      if au ~= bu then return bu end
      if a[2] ~= b[2] then return a[2] < b[2] end
      return a[1] < b[1]
   end)
   local items, supply, qty = {}, {}, {}
   for k = 1, n do
      items[k], supply[k], qty[k] = lines[k][1], lines[k][2], lines[k][3]
   end
   return table.concat(items, ","), table.concat(supply, ","), table.concat(qty, ",")
end

local TX = {}

function TX.new_order(w)
   local d, c, n = rnd(1, 10), nurand(1023, 1, 3000, 0), rnd(5, 15)
   local rbk = rnd(1, 100) == 1
   local items, supply, qty = order_lines(w, n, rbk)
   call("CALL tpcc_new_order(%d, %d, %d, '%s', '%s', '%s', @tpcc_o)", w, d, c, items, supply, qty)
   if not rbk then return "commit" end
   -- TPC-C's 1%: the procedure undid the whole order (d_next_o_id included) and says so with o_id -1;
   -- read only then (a second round trip for 1% of new orders), and checked
   local o = tonumber(con:query_row("SELECT @tpcc_o"))
   if o ~= -1 then error(fmt("tpcc_new_order with the unused item reported o_id %s, not -1", tostring(o)), 0) end
   return "rollback"
end

function TX.payment(w)
   local d, c = rnd(1, 10), nurand(1023, 1, 3000, 0)
   local last = last_or_null()
   local amount = rnd(100, 500000) / 100
   local cw, cd = w, d
   if W > 1 and rnd(1, 100) <= 15 then
      cw, cd = other_warehouse(w), rnd(1, 10)
   end
   call("CALL tpcc_payment(%d, %d, %d, %d, %d, %s, %.2f)", w, d, cw, cd, c, last, amount)
   return "commit"
end

function TX.order_status(w)
   local d, c = rnd(1, 10), nurand(1023, 1, 3000, 0)
   call("CALL tpcc_order_status(%d, %d, %d, %s)", w, d, c, last_or_null())
   return "commit"
end

function TX.delivery(w)
   call("CALL tpcc_delivery(%d, %d)", w, rnd(1, 10))
   return "commit"
end

function TX.stock_level(w)
   call("CALL tpcc_stock_level(%d, %d, %d)", w, rnd(1, 10), rnd(10, 20))
   return "commit"
end

function thread_init()
   drv = sysbench.sql.driver()
   con = drv:connect()
   con:query("SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED")
   W = sysbench.opt.warehouses
   C_RUN = tonumber(con:query_row("SELECT c_run FROM tpcc_c_last"))
   done, retries = {}, {}
   for _, name in ipairs(NAMES) do
      done[name], retries[name] = 0, 0
   end
   rollbacks = 0
end

local function pick()
   local r = rnd(1, 100)
   for i, weight in ipairs(WEIGHTS) do
      if r <= weight then return NAMES[i] end
      r = r - weight
   end
   return NAMES[#NAMES]
end

function event()
   local kind, w = pick(), rnd(1, W)
   while true do
      local ok, res = pcall(TX[kind], w)
      if ok then
         done[kind] = done[kind] + 1
         if res == "rollback" then rollbacks = rollbacks + 1 end
         return
      end
      if type(res) == "table" and res.errcode == sysbench.error.RESTART_EVENT then
         pcall(con.query, con, "ROLLBACK")     -- a lock wait timeout undoes the statement only
         retries[kind] = retries[kind] + 1
      else
         error(res, 0)
      end
   end
end

function thread_done(thread_id)
   local parts = {}
   for _, name in ipairs(NAMES) do
      parts[#parts + 1] = fmt("%s=%d", name, done[name])
   end
   for _, name in ipairs(NAMES) do
      parts[#parts + 1] = fmt("%s_retries=%d", name, retries[name])
   end
   -- one write with its newline: threads finishing together must not run into one another's line
   io.stdout:write(fmt("tpcc-mix: thread=%d %s new_order_rollbacks=%d\n", thread_id, table.concat(parts, " "),
                       rollbacks))
   io.stdout:flush()
   con:disconnect()
end
