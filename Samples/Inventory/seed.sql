-- Rows of the Inventory sample, in Core Data's layout (see Documentation/Architecture.md).
-- Dates are seconds since 2001-01-01 00:00:00 UTC, as Core Data stores them:
--   815304600   = 2026-11-02T09:30:00Z
--   815925600   = 2026-11-09T14:00:00Z
--   816547530.5 = 2026-11-16T18:45:30.5Z
BEGIN;
UPDATE Z_METADATA SET Z_UUID = 'F00DF00D-0000-4000-8000-000000000001';
INSERT INTO ZLOCATION (Z_PK, Z_ENT, Z_OPT, ZLABEL) VALUES
  (1, 3, 1, 'Jaye''s Basement'),
  (2, 3, 1, 'Garage'),
  (3, 3, 1, 'Office');
INSERT INTO ZASSET (Z_PK, Z_ENT, Z_OPT, ZLABEL) VALUES
  (1, 1, 1, 'Coffee Mug'),
  (2, 1, 1, 'T-shirt'),
  (3, 1, 1, 'Bicycle'),
  (4, 1, 1, 'Laptop'),
  (5, 1, 1, 'Camping Stove');
INSERT INTO ZINVENTORY (Z_PK, Z_ENT, Z_OPT, ZCOUNT, ZASSET, ZLOCATION, ZDATE) VALUES
  (1, 2, 1, 12, 1, 1, 815304600),
  (2, 2, 1, 30, 2, 1, 815304600),
  (3, 2, 1, 1, 5, 1, 815925600),
  (4, 2, 1, 2, 3, 2, 815925600),
  (5, 2, 1, 1, 5, 2, 816547530.5),
  (6, 2, 1, 4, 1, 3, 816547530.5),
  (7, 2, 1, 1, 4, 3, 816547530.5),
  (8, 2, 1, 6, 2, 3, NULL);
UPDATE Z_PRIMARYKEY SET Z_MAX = (SELECT MAX(Z_PK) FROM ZASSET) WHERE Z_NAME = 'Asset';
UPDATE Z_PRIMARYKEY SET Z_MAX = (SELECT MAX(Z_PK) FROM ZINVENTORY) WHERE Z_NAME = 'Inventory';
UPDATE Z_PRIMARYKEY SET Z_MAX = (SELECT MAX(Z_PK) FROM ZLOCATION) WHERE Z_NAME = 'Location';
COMMIT;
