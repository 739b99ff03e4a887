-- dbtier's TPC-C-like workload for sysbench 1.0.20 (LuaJIT) on MySQL/MariaDB, client-side.
--
-- The five transactions of workloads/sql/tpcc_functions.sql (PostgreSQL's), one sysbench event each:
-- the same 45/43/4/4/4 mix, cardinalities, NURand (C = 0 for C_ID and OL_I_ID, C_LAST's run constant
-- from the one-row table tpcc_c_last the loader wrote), 60% of payments and order-status by last
-- name, 1% remote lines / 15% remote payments with more than one warehouse, and the 1% new-order
-- rollback by an unused item (rolled back, counted as a transaction, not as a new order).
-- READ COMMITTED, as PostgreSQL's; new-order updates stock in (supply warehouse, item) order.
-- A deadlock (1213) or lock wait timeout (1205) -- sysbench's ignorable errors, raised as
-- RESTART_EVENT -- rolls the transaction back and runs it again (new inputs, the same type and
-- warehouse); each such retry is counted. At the end each thread prints one `tpcc-mix:` line with its
-- counts, which workloads/mariadb_tpcc.py adds up.
-- Plain queries, not prepared statements: sysbench 1.0.20 cannot fetch a prepared statement's rows.

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

local function q(sql, ...)
   return con:query(fmt(sql, ...))
end

local function row(sql, ...)
   local rs = con:query(fmt(sql, ...))
   return rs and rs:fetch_row()
end

-- Of the district's customers with that last name, ordered by first name, the one at ceil(n/2).
local function customer_by_name(w, d, last)
   local rs = q("SELECT c_id FROM customer WHERE c_w_id = %d AND c_d_id = %d AND c_last = '%s' ORDER BY c_first",
                w, d, last)
   local ids, r = {}, rs:fetch_row()
   while r do
      ids[#ids + 1] = r[1]
      r = rs:fetch_row()
   end
   if #ids == 0 then return nil end
   return tonumber(ids[math.floor((#ids + 1) / 2)])
end

local function run_lastname()
   return lastname(nurand(255, 0, 999, C_RUN))
end

local TX = {}

function TX.new_order(w)
   local d, c, n = rnd(1, 10), nurand(1023, 1, 3000, 0), rnd(5, 15)
   local rbk = rnd(1, 100) == 1
   local lines, all_local = {}, 1
   for k = 1, n do
      local it = (rbk and k == n) and UNUSED_ITEM or nurand(8191, 1, ITEMS, 0)
      local sw = w
      if W > 1 and rnd(1, 100) == 1 then sw = other_warehouse(w) end
      if sw ~= w then all_local = 0 end
      lines[k] = {it, sw}
   end
   -- stock rows locked in one order by every new order (no deadlock between two), the unused item last
   table.sort(lines, function(a, b)
      local au, bu = a[1] > ITEMS, b[1] > ITEMS
      if au ~= bu then return bu end
      if a[2] ~= b[2] then return a[2] < b[2] end
      return a[1] < b[1]
   end)
   con:query("BEGIN")
   row("SELECT w_tax FROM warehouse WHERE w_id = %d", w)
   q("UPDATE district SET d_next_o_id = d_next_o_id + 1 WHERE d_w_id = %d AND d_id = %d", w, d)
   local o = tonumber(row("SELECT d_next_o_id - 1, d_tax FROM district WHERE d_w_id = %d AND d_id = %d", w, d)[1])
   row("SELECT c_discount, c_last, c_credit FROM customer WHERE c_w_id = %d AND c_d_id = %d AND c_id = %d", w, d, c)
   q("INSERT INTO orders VALUES (%d, %d, %d, %d, NOW(), NULL, %d, %d)", o, d, w, c, n, all_local)
   q("INSERT INTO new_order VALUES (%d, %d, %d)", o, d, w)
   for k = 1, n do
      local it, sw = lines[k][1], lines[k][2]
      local item = row("SELECT i_price, i_name, i_data FROM item WHERE i_id = %d", it)
      if item == nil then
         con:query("ROLLBACK")      -- TPC-C's 1%: the whole order undone, d_next_o_id included
         return "rollback"
      end
      local qty = rnd(1, 10)
      q("UPDATE stock SET s_quantity = CASE WHEN s_quantity - %d >= 10 THEN s_quantity - %d " ..
        "ELSE s_quantity - %d + 91 END, s_ytd = s_ytd + %d, s_order_cnt = s_order_cnt + 1, " ..
        "s_remote_cnt = s_remote_cnt + %d WHERE s_w_id = %d AND s_i_id = %d",
        qty, qty, qty, qty, sw ~= w and 1 or 0, sw, it)
      local s = row("SELECT s_quantity, s_data, s_dist_%02d FROM stock WHERE s_w_id = %d AND s_i_id = %d", d, sw, it)
      q("INSERT INTO order_line VALUES (%d, %d, %d, %d, %d, %d, NULL, %d, %.2f, '%s')",
        o, d, w, k, it, sw, qty, qty * tonumber(item[1]), s[3])
   end
   con:query("COMMIT")
   return "commit"
end

function TX.payment(w)
   local d, c = rnd(1, 10), nurand(1023, 1, 3000, 0)
   local by_name = rnd(1, 100) <= 60
   local amount = rnd(100, 500000) / 100
   local cw, cd = w, d
   if W > 1 and rnd(1, 100) <= 15 then
      cw, cd = other_warehouse(w), rnd(1, 10)
   end
   con:query("BEGIN")
   q("UPDATE warehouse SET w_ytd = w_ytd + %.2f WHERE w_id = %d", amount, w)
   local wname = row("SELECT w_name FROM warehouse WHERE w_id = %d", w)[1]
   q("UPDATE district SET d_ytd = d_ytd + %.2f WHERE d_w_id = %d AND d_id = %d", amount, w, d)
   local dname = row("SELECT d_name FROM district WHERE d_w_id = %d AND d_id = %d", w, d)[1]
   if by_name then
      c = customer_by_name(cw, cd, run_lastname()) or c
   end
   -- a bad-credit customer's C_DATA gets the payment prepended, truncated to 500 characters
   q("UPDATE customer SET c_balance = c_balance - %.2f, c_ytd_payment = c_ytd_payment + %.2f, " ..
     "c_payment_cnt = c_payment_cnt + 1, c_data = CASE WHEN c_credit = 'BC' " ..
     "THEN SUBSTRING(CONCAT('%d %d %d %d %d %.2f ', c_data), 1, 500) ELSE c_data END " ..
     "WHERE c_w_id = %d AND c_d_id = %d AND c_id = %d",
     amount, amount, c, cd, cw, d, w, amount, cw, cd, c)
   q("INSERT INTO history VALUES (%d, %d, %d, %d, %d, NOW(), %.2f, '%s    %s')", c, cd, cw, d, w, amount,
     wname, dname)
   con:query("COMMIT")
   return "commit"
end

function TX.order_status(w)
   local d, c = rnd(1, 10), nurand(1023, 1, 3000, 0)
   local by_name = rnd(1, 100) <= 60
   con:query("BEGIN")
   if by_name then
      c = customer_by_name(w, d, run_lastname()) or c
   end
   row("SELECT c_balance, c_first, c_middle, c_last FROM customer WHERE c_w_id = %d AND c_d_id = %d AND c_id = %d",
       w, d, c)
   local o = row("SELECT o_id, o_entry_d, o_carrier_id FROM orders WHERE o_w_id = %d AND o_d_id = %d " ..
                 "AND o_c_id = %d ORDER BY o_id DESC LIMIT 1", w, d, c)
   if o then
      local rs = q("SELECT ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d FROM order_line " ..
                   "WHERE ol_w_id = %d AND ol_d_id = %d AND ol_o_id = %d", w, d, tonumber(o[1]))
      while rs:fetch_row() do end
   end
   con:query("COMMIT")
   return "commit"
end

-- Each district's oldest new order, locked (FOR UPDATE, no SKIP LOCKED): a concurrent delivery of the
-- same warehouse waits for it, then InnoDB skips the row the other deleted and locks the next.
function TX.delivery(w)
   local carrier = rnd(1, 10)
   con:query("BEGIN")
   for d = 1, 10 do
      local no = row("SELECT no_o_id FROM new_order WHERE no_w_id = %d AND no_d_id = %d " ..
                     "ORDER BY no_o_id LIMIT 1 FOR UPDATE", w, d)
      if no then
         local o = tonumber(no[1])
         q("DELETE FROM new_order WHERE no_w_id = %d AND no_d_id = %d AND no_o_id = %d", w, d, o)
         q("UPDATE orders SET o_carrier_id = %d WHERE o_w_id = %d AND o_d_id = %d AND o_id = %d", carrier, w, d, o)
         local c = tonumber(row("SELECT o_c_id FROM orders WHERE o_w_id = %d AND o_d_id = %d AND o_id = %d",
                                w, d, o)[1])
         q("UPDATE order_line SET ol_delivery_d = NOW() WHERE ol_w_id = %d AND ol_d_id = %d AND ol_o_id = %d",
           w, d, o)
         local total = row("SELECT COALESCE(SUM(ol_amount), 0) FROM order_line WHERE ol_w_id = %d AND ol_d_id = %d " ..
                           "AND ol_o_id = %d", w, d, o)[1]
         q("UPDATE customer SET c_balance = c_balance + %s, c_delivery_cnt = c_delivery_cnt + 1 " ..
           "WHERE c_w_id = %d AND c_d_id = %d AND c_id = %d", total, w, d, c)
      end
   end
   con:query("COMMIT")
   return "commit"
end

function TX.stock_level(w)
   local d, threshold = rnd(1, 10), rnd(10, 20)
   con:query("BEGIN")
   local nxt = tonumber(row("SELECT d_next_o_id FROM district WHERE d_w_id = %d AND d_id = %d", w, d)[1])
   row("SELECT COUNT(DISTINCT s_i_id) FROM order_line JOIN stock ON s_w_id = %d AND s_i_id = ol_i_id " ..
       "WHERE ol_w_id = %d AND ol_d_id = %d AND ol_o_id >= %d AND ol_o_id < %d AND s_quantity < %d",
       w, w, d, nxt - 20, nxt, threshold)
   con:query("COMMIT")
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
   print(fmt("tpcc-mix: thread=%d %s new_order_rollbacks=%d", thread_id, table.concat(parts, " "), rollbacks))
   con:disconnect()
end
