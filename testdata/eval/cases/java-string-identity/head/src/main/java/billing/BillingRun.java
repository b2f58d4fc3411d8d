package billing;

import java.util.List;

public class BillingRun {
    private final Charger charger;

    public BillingRun(Charger charger) {
        this.charger = charger;
    }

    public void run(List<Account> accounts) {
        for (Account a : accounts) {
            if (a.getStatus() == "SUSPENDED") {
                continue;
            }
            charger.charge(a);
        }
    }
}
