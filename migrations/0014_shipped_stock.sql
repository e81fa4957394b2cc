-- Stock that leaves with a shipment, or comes back because a shipment was cancelled before pickup, leaves
-- an adjustment row like every other stock change. These two reasons are the system's: the inventory.adjust
-- procedure does not offer them to people.
alter table inventory_adjustment drop constraint inventory_adjustment_reason_check;
alter table inventory_adjustment add constraint inventory_adjustment_reason_check
  check (reason in ('received', 'correction', 'damaged', 'shrinkage', 'returned', 'recount', 'other', 'shipped', 'shipment_cancelled'));
