package shop;

import java.util.List;

public class OrderExporter {
    private final UserRepository users;

    public OrderExporter(UserRepository users) {
        this.users = users;
    }

    public String toCsv(List<Order> orders) {
        StringBuilder sb = new StringBuilder("id,email,total\n");
        for (Order o : orders) {
            sb.append(o.id()).append(',').append(o.email()).append(',').append(o.total()).append('\n');
        }
        return sb.toString();
    }
}
