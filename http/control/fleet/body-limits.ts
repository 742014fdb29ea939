import { MiB } from '../../shared/body-limit.js';

/**
 * `POST /admin/provision` carries a whole desired state (free-form, no list caps):
 * a node with a thousand peerings (interface ~500 bytes, session ~400 bytes) is
 * about 1 MB, so 2 MiB, the old global limit every provision so far fitted in.
 */
export const PROVISION_BODY_LIMIT_BYTES = 2 * MiB;

/**
 * Node create and update carry the free-form `base_template`, `labels` and
 * `inventory`: internal topology (256 routers, 256 hosts), 256 local-pref rules and
 * blocked prefixes come to about 100 KB; 1 MiB leaves room for inventories.
 */
export const NODE_BODY_LIMIT_BYTES = 1 * MiB;
