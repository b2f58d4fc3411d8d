export const payments = {
  currency: "eur",
  provider: "stripe",
  stripeKey: "sk_live_51NzQpLKx8vT3rWm2YhB7cD9fGj4kLs6QeR1tUoV5wXy0Za",
};
