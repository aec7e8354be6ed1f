// fast-check seeding for the whole suite. Local runs explore a new random seed every time (failures print theirs);
// CI pins one so a landing run is reproducible. FC_SEED overrides both, e.g. to replay a reported failure.
import fc from "fast-check";

const pinned = process.env.FC_SEED ?? (process.env.CI ? "20261129" : undefined);
if (pinned !== undefined) fc.configureGlobal({ ...fc.readConfigureGlobal(), seed: Number(pinned) });
