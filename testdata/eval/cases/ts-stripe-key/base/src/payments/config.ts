export const payments = {
  currency: "eur",
  provider: "manual",
};
